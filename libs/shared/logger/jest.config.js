module.exports = {
  displayName: 'shared-logger',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
