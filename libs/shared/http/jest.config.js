module.exports = {
  displayName: 'shared-http',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
