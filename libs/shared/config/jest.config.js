module.exports = {
  displayName: 'shared-config',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
